"""tf.regex_replace and tf.strings.regex_full_match with RE2's syntax and rules, as TensorFlow
2.21 computes them: ASCII-only \\w \\d \\s \\b, `$` only at the end of the text, POSIX classes,
no lookarounds or backreferences, GlobalReplace's empty-match and bad-rewrite rules. Expected
values are TF 2.21's outputs."""
import numpy as np
import pytest

import tensorweave as tf

_TEXT = "ab a]b$ é_1\nb x\ny"
_FIRST = "ab a]b$ é_1\nb"
_WORDS = ["ab", "a", "é", "1", "b\n"]


def _run(t):
    with tf.Session() as s:
        return [v.decode() if isinstance(v, bytes) else v
                for v in np.asarray(s.run(t), dtype=object).ravel()]


@pytest.mark.parametrize("pattern, rewrite, expected, first, matches", [
    (r"[\w]+", "X", ["X X]X$ éX\nX X\nX", "é"], "X a]b$ é_1\nb",
     [True, True, False, True, False]),
    (r"[^\d]", "#", ["##########1######", "#"], "#b a]b$ é_1\nb",
     [False, True, True, False, False]),
    (r"\W", "_", ["ab_a_b____1_b_x_y", "_"], "ab_a]b$ é_1\nb",
     [False, False, True, False, False]),
    (r"\bab", "X", ["X a]b$ é_1\nb x\ny", "é"], "X a]b$ é_1\nb",
     [True, False, False, False, False]),
    (r"\Bb", "X", ["aX a]b$ é_1\nb x\ny", "é"], "aX a]b$ é_1\nb",
     [False, False, False, False, False]),
    (r"[]a]", "X", ["Xb XXb$ é_1\nb x\ny", "é"], "Xb a]b$ é_1\nb",
     [False, True, False, False, False]),
    (r"[^]a]", "X", ["aXXa]XXXXXXXXXXXX", "X"], "aX a]b$ é_1\nb",
     [False, False, True, True, False]),
    (r"(?m)^b$", "X", [_TEXT, "é"], "ab a]b$ é_1\nX", [False] * 5),
    (r"a$|b", "X", ["aX a]X$ é_1\nX x\ny", "é"], "aX a]b$ é_1\nb",
     [False, True, False, False, False]),
    (r"[[:alpha:]]+", "X", ["X X]X$ é_1\nX X\nX", "é"], "X a]b$ é_1\nb",
     [True, True, False, False, False]),
    (r"[^[:space:]]", ".", [".. .... ...\n. .\n.", "."], ".b a]b$ é_1\nb",
     [False, True, True, True, False]),
    (r"\$", "D", ["ab a]bD é_1\nb x\ny", "é"], "ab a]bD é_1\nb", [False] * 5),
    (r"(?i)É", "e", ["ab a]b$ e_1\nb x\ny", "e"], "ab a]b$ e_1\nb",
     [False, False, True, False, False]),
    (r"\S+", "<\\0>", ["<ab> <a]b$> <é_1>\n<b> <x>\n<y>", "<é>"], "<ab> a]b$ é_1\nb",
     [True, True, True, True, False]),
    # A stray backslash in the rewrite: GlobalReplace keeps the text before it for each
    # match; Replace (first match only) leaves the string unchanged.
    ("a", "x\\ny", ["xb x]b$ é_1\nb x\ny", "é"], _FIRST, [False, True, False, False, False]),
    ("a", "\\", ["b ]b$ é_1\nb x\ny", "é"], _FIRST, [False, True, False, False, False]),
    ("(a)", "\\1\\1\\\\", ["aa\\b aa\\]b$ é_1\nb x\ny", "é"], "aa\\b a]b$ é_1\nb",
     [False, True, False, False, False]),
])
def test_re2_syntax(pattern, rewrite, expected, first, matches):
    with tf.Graph().as_default():
        every = tf.regex_replace(tf.constant([_TEXT, "é"]), pattern, rewrite)
        once = tf.regex_replace(tf.constant([_FIRST]), pattern, rewrite, replace_global=False)
        full = tf.strings.regex_full_match(tf.constant(_WORDS), pattern)
        assert _run(every) == expected
        assert _run(once) == [first]
        assert _run(full) == matches


@pytest.mark.parametrize("text, pattern, expected", [
    ("abc", "b*", "-a-c-"),            # no empty match where the previous match ended
    ("abc", "", "-a-b-c-"),
    ("a\n", "$", "a\n<"),               # `$` is the end of the text only
    ("a\n", r"\z", "a\n<"),
    ("a\nb", "^", ">a\nb"),
    ("é", r"\w", "é"),                  # \w is ASCII
])
def test_global_replace_positions(text, pattern, expected):
    rewrite = "<" if "<" in expected else ">" if ">" in expected else "-"
    with tf.Graph().as_default():
        assert _run(tf.regex_replace(tf.constant([text]), pattern, rewrite)) == [expected]


@pytest.mark.parametrize("pattern", [r"a(?=b)b", r"a(?!c)b", r"(?<=a)b", r"(a)\1",
                                     r"(?P<x>a)(?P=x)"])
def test_patterns_re2_rejects(pattern):
    with tf.Graph().as_default():
        full = tf.strings.regex_full_match(tf.constant(["ab"]), pattern)
        replace = tf.regex_replace(tf.constant(["ab"]), pattern, "x")
        for t in (full, replace):
            with pytest.raises(tf.errors.InvalidArgumentError):
                _run(t)
