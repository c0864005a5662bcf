"""Seeded samples of every tf.distributions family are TensorFlow 2.21's, run after run.

Each case builds a sample under graph seed 3 and runs it in one session as often as it has
expected values; those are TensorFlow 2.21's (compat.v1, same program), recorded once. The
families build TensorFlow's graphs (the same random ops, seeds and shapes), so the numbers are
equal bit for bit, except where the last float step is Log, Log1p or Rsqrt: those kernels are
libm's, TensorFlow's are Eigen's vectorized ones, which differ in the last bit or two (the draws
under them are equal). Multinomial is pinned for one row only: over several rows TensorFlow's
map_fn runs the rows' multinomial ops in an order that races (here row after row).
"""
import numpy as np
import pytest

import tensorweave as tf

# name -> builds the sample (of TensorFlow's module `tf`, so one table serves both).
CASES = {
    "Normal": lambda tf: tf.distributions.Normal([0.0, 1.0], [1.0, 2.0]).sample([2, 3], seed=7),
    "Normal_unseeded": lambda tf: tf.distributions.Normal(0.0, 1.0).sample(3),
    "Normal_dynamic_n": lambda tf: tf.distributions.Normal([0.0, 1.0], 2.0).sample(
        tf.placeholder_with_default(3, []), seed=1),
    "Uniform": lambda tf: tf.distributions.Uniform([0.0, -1.0], [[1.0, 2.0], [3.0, 4.0]]).sample(
        3, seed=7),
    "Laplace": lambda tf: tf.distributions.Laplace([[0.0], [1.0]], [1.0, 2.0, 3.0]).sample(
        2, seed=9),
    "Exponential": lambda tf: tf.distributions.Exponential([1.0, 2.5]).sample(4, seed=9),
    "Gamma": lambda tf: tf.distributions.Gamma([[0.5, 2.0]], [[1.0], [2.0]]).sample(3, seed=5),
    "Gamma_float64": lambda tf: tf.distributions.Gamma(np.array([0.7, 3.0]),
                                                       np.array([1.5, 0.5])).sample(2, seed=1),
    "Beta": lambda tf: tf.distributions.Beta([0.5, 2.0], [[1.5], [3.0]]).sample(3, seed=7),
    "StudentT": lambda tf: tf.distributions.StudentT(df=[3.0, 10.0], loc=[[0.0], [1.0]],
                                                     scale=2.0).sample(3, seed=11),
    "Dirichlet": lambda tf: tf.distributions.Dirichlet([[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]]).sample(
        3, seed=13),
    "Bernoulli": lambda tf: tf.distributions.Bernoulli(probs=[[0.3, 0.6], [0.9, 0.1]]).sample(
        5, seed=2),
    "Bernoulli_bool": lambda tf: tf.distributions.Bernoulli(probs=[0.3, 0.6],
                                                            dtype=tf.bool).sample(4, seed=2),
    "Categorical": lambda tf: tf.distributions.Categorical(
        logits=[[0.1, 0.5, -1.0], [2.0, 0.0, 0.0]]).sample(4, seed=4),
    "Categorical_float32": lambda tf: tf.distributions.Categorical(
        probs=[[[0.2, 0.8], [0.6, 0.4]]], dtype=tf.float32).sample([2, 2], seed=4),
    "Multinomial_one_row": lambda tf: tf.distributions.Multinomial(
        total_count=5.0, probs=[0.2, 0.3, 0.5]).sample(4, seed=6),
    "DirichletMultinomial": lambda tf: tf.distributions.DirichletMultinomial(
        total_count=6.0, concentration=[[0.5, 2.0, 1.0], [3.0, 1.0, 1.0]]).sample(3, seed=8),
    "DirichletMultinomial_unseeded": lambda tf: tf.distributions.DirichletMultinomial(
        total_count=4.0, concentration=[1.0, 2.0]).sample([2, 2]),
}

# Log, Log1p or Rsqrt last: libm's against Eigen's, within this many ulp.
ULPS = {"Laplace": 2, "Exponential": 2, "StudentT": 2}

EXPECTED = {   # name -> (dtype, [run 1, run 2, ...]): TensorFlow 2.21's samples
    "Normal": ("float32", [
        [[[-0.4506755471229553, -0.30576300621032715], [0.3364031910896301, 3.704498767852783],
          [0.7076454162597656, 0.27037423849105835]],
         [[0.5284478068351746, 0.342715859413147], [0.03968273848295212, 0.46930038928985596],
          [0.06776812672615051, -0.39633166790008545]]],
        [[[-0.6779825687408447, -0.2595404386520386], [0.0870790034532547, -2.6762523651123047],
          [-0.5202752351760864, 0.417050302028656]],
         [[1.277478814125061, -1.5254848003387451], [0.618249237537384, -2.3741440773010254],
          [2.7209560871124268, -0.879063606262207]]],
    ]),
    "Normal_unseeded": ("float32", [
        [-1.864717960357666, 0.8026450276374817, -0.4432171583175659],
        [0.008294983766973019, 1.1544195413589478, 1.6332207918167114],
    ]),
    "Normal_dynamic_n": ("float32", [
        [[-0.04707176238298416, -0.41608738899230957], [1.5813405513763428, 2.1220173835754395],
         [-2.940995693206787, -2.220048427581787]],
        [[1.426033854484558, 2.513692855834961], [-0.8877745270729065, 1.5741851329803467],
         [-4.420739650726318, 0.38061147928237915]],
    ]),
    "Uniform": ("float32", [
        [[[0.7300214767456055, 0.78847336769104], [1.1362570524215698, -0.8059713840484619]],
         [[0.7283852100372314, -0.02272927761077881], [2.4718847274780273, 0.6927433013916016]],
         [[0.9646474123001099, 0.4291210174560547], [2.345733642578125, 1.4229984283447266]]],
        [[[0.6517231464385986, 0.892594575881958], [0.5518201589584351, 1.462329387664795]],
         [[0.8370914459228516, 1.0061755180358887], [0.5977259874343872, 0.870383620262146]],
         [[0.19904541969299316, 0.33228325843811035], [0.04761779308319092, 0.5145766735076904]]],
    ]),
    "Laplace": ("float32", [
        [[[0.9703370332717896, -3.5847508907318115, -1.3885940313339233],
          [0.7128051519393921, 0.011946558952331543, 1.4627124071121216]],
         [[1.7293988466262817, -6.710304260253906, 4.1572160720825195],
          [0.981346607208252, 1.720725178718567, 0.5942795872688293]]],
        [[[-2.969379425048828, 0.41680651903152466, -0.8585488796234131],
          [4.831230640411377, 2.429281711578369, -5.23612117767334]],
         [[-0.20651811361312866, 0.524380087852478, 1.0319108963012695],
          [-1.579984188079834, -1.5403871536254883, -0.3244814872741699]]],
    ]),
    "Exponential": ("float32", [
        [[0.21007640659809113, 0.9942092299461365], [1.156011939048767, 0.392136812210083],
         [1.1871740818023682, 0.22382031381130219], [0.09287822246551514, 1.619320273399353]],
        [[0.34451648592948914, 0.30994343757629395], [0.03730872645974159, 0.45848819613456726],
         [2.7050015926361084, 0.2068874090909958], [0.5252612233161926, 0.42094001173973083]],
    ]),
    "Gamma": ("float32", [
        [[[0.7825867533683777, 3.3068370819091797], [0.2659527659416199, 0.9348246455192566]],
         [[0.4133295714855194, 1.4688979387283325], [0.018564419820904732, 0.5692963004112244]],
         [[0.9013304114341736, 4.0348100662231445], [0.016426777467131615, 1.8424776792526245]]],
        [[[0.38097885251045227, 0.8023841381072998], [0.04190169647336006, 0.5351767539978027]],
         [[0.6347799301147461, 1.176432728767395], [0.007168345618993044, 1.0968050956726074]],
         [[0.07202286273241043, 1.830428957939148], [0.10488707572221756, 0.9490495920181274]]],
    ]),
    "Gamma_float64": ("float64", [
        [[1.9806639750187793, 7.511424927717243], [1.7952686573679983, 6.2633033569639345]],
        [[0.9918494216902048, 8.752269398693436], [0.034829559159436974, 3.433757998043533]],
    ]),
    "Beta": ("float32", [
        [[[0.31053614616394043, 0.33997640013694763], [0.21105298399925232, 0.26226121187210083]],
         [[0.006920986343175173, 0.6249028444290161], [0.06124332174658775, 0.211739644408226]],
         [[0.06746803224086761, 0.16412349045276642], [0.800466001033783, 0.1694207340478897]]],
        [[[0.048260003328323364, 0.7496792674064636], [0.07659178972244263, 0.447183221578598]],
         [[0.29595863819122314, 0.5268189311027527], [0.09422529488801956, 0.4519629180431366]],
         [[0.015469523146748543, 0.3779240548610687], [0.7206619381904602, 0.5867491364479065]]],
    ]),
    "StudentT": ("float32", [
        [[[3.4594948291778564, 0.2479315549135208], [1.3933839797973633, 0.7671025395393372]],
         [[1.9478204250335693, -1.364877462387085], [3.2214531898498535, -2.5812408924102783]],
         [[-2.9628989696502686, 1.590988039970398], [2.2425484657287598, -1.1968824863433838]]],
        [[[4.460827350616455, 3.167346715927124], [1.294639229774475, -0.6084752082824707]],
         [[1.5843992233276367, -1.2930279970169067], [-1.3795156478881836, 0.9999187588691711]],
         [[0.25332310795783997, 1.403062105178833], [-2.144171953201294, -1.687004566192627]]],
    ]),
    "Dirichlet": ("float32", [
        [[[0.17071545124053955, 0.7915523648262024, 0.03773217275738716],
          [0.3436097502708435, 0.6407362222671509, 0.01565401628613472]],
         [[0.11736593395471573, 0.3862803876399994, 0.4963536262512207],
          [0.8548504114151001, 0.11280268430709839, 0.032346922904253006]],
         [[0.07433469593524933, 0.8870213627815247, 0.038643985986709595],
          [0.8703486919403076, 0.07506172358989716, 0.05458953231573105]]],
        [[[0.36635276675224304, 0.21471107006072998, 0.41893619298934937],
          [0.8508850932121277, 0.10869104415178299, 0.040423836559057236]],
         [[0.18656955659389496, 0.6346109509468079, 0.17881953716278076],
          [0.6998681426048279, 0.05146541818976402, 0.2486664205789566]],
         [[0.3971293568611145, 0.3366597294807434, 0.2662108838558197],
          [0.5431551933288574, 0.03505837544798851, 0.4217863976955414]]],
    ]),
    "Bernoulli": ("int32", [
        [[[0, 1], [1, 0]], [[0, 1], [0, 0]], [[1, 1], [1, 0]], [[1, 1], [1, 0]], [[1, 1], [1, 0]]],
        [[[0, 1], [1, 0]], [[1, 0], [1, 0]], [[0, 1], [1, 0]], [[0, 1], [1, 0]], [[0, 1], [1, 0]]],
    ]),
    "Bernoulli_bool": ("bool", [
        [[False, True], [True, False], [False, True], [False, False]],
        [[False, True], [False, True], [True, True], [False, True]],
    ]),
    "Categorical": ("int32", [
        [[1, 0], [1, 0], [0, 0], [1, 0]],
        [[1, 0], [1, 0], [0, 0], [1, 0]],
    ]),
    "Categorical_float32": ("float32", [
        [[[[1.0, 0.0]], [[1.0, 0.0]]], [[[1.0, 0.0]], [[1.0, 1.0]]]],
        [[[[1.0, 1.0]], [[1.0, 0.0]]], [[[1.0, 0.0]], [[1.0, 0.0]]]],
    ]),
    "Multinomial_one_row": ("float32", [
        [[1.0, 0.0, 4.0], [0.0, 0.0, 5.0], [2.0, 1.0, 2.0], [1.0, 0.0, 4.0]],
        [[1.0, 0.0, 4.0], [1.0, 0.0, 4.0], [1.0, 1.0, 3.0], [2.0, 0.0, 3.0]],
    ]),
    "DirichletMultinomial": ("float32", [
        [[[0.0, 6.0, 0.0], [3.0, 3.0, 0.0]], [[0.0, 2.0, 4.0], [3.0, 2.0, 1.0]],
         [[3.0, 1.0, 2.0], [4.0, 2.0, 0.0]]],
        [[[0.0, 0.0, 6.0], [3.0, 1.0, 2.0]], [[0.0, 4.0, 2.0], [2.0, 1.0, 3.0]],
         [[0.0, 3.0, 3.0], [5.0, 1.0, 0.0]]],
    ]),
    "DirichletMultinomial_unseeded": ("float32", [
        [[[1.0, 3.0], [1.0, 3.0]], [[1.0, 3.0], [0.0, 4.0]]],
        [[[1.0, 3.0], [3.0, 1.0]], [[0.0, 4.0], [0.0, 4.0]]],
    ]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_samples_are_tensorflows(name):
    dtype, runs = EXPECTED[name]
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        sample = CASES[name](tf)
        with tf.Session() as sess:
            got = [sess.run(sample) for _ in runs]
    for value, want in zip(got, runs):
        want = np.array(want, dtype)
        assert (value.dtype, value.shape) == (want.dtype, want.shape)
        if name in ULPS:
            np.testing.assert_array_max_ulp(value, want, maxulp=ULPS[name])
        else:
            np.testing.assert_array_equal(value, want)


def test_count_families_build_tensorflows_random_ops():
    """Multinomial: one multinomial op inside map_fn's loop, seeded as given; Dirichlet-
    Multinomial: gammas with the seed, then a multinomial of gen_new_seed(seed, salt)."""
    def random_ops(build):
        with tf.Graph().as_default() as graph:
            tf.set_random_seed(3)
            build()
            return [(op.type, op.get_attr("seed"), op.get_attr("seed2"))
                    for op in graph.get_operations() if op.type in ("Multinomial", "RandomGamma")]
    D = tf.distributions
    assert random_ops(lambda: D.Multinomial(total_count=[2.0, 3.0], probs=[[0.5, 0.5]] * 2)
                      .sample(2, seed=4)) == [("Multinomial", 3, 4)]
    assert random_ops(lambda: D.DirichletMultinomial(2.0, [1.0, 1.0]).sample(2, seed=8)) == [
        ("RandomGamma", 3, 8), ("Multinomial", 3, 608686885)]


def test_multinomial_rows_draw_row_after_row():
    """Several rows: each row's counts sum to its total, and row i's draws are those of the
    multinomial op's (i + 1)-th run (its stream moves on from row to row)."""
    logits = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    totals = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        sample = tf.distributions.Multinomial(total_count=totals, logits=logits).sample(
            2, seed=4)
        with tf.Session() as sess:
            rows = sess.run(sample)
    assert rows.shape == (2, 4, 3)
    np.testing.assert_array_equal(rows.sum(-1), np.broadcast_to(totals, (2, 4)))
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        row = tf.placeholder(tf.float32, [1, 3])
        total = tf.placeholder(tf.int32, [])
        draws = tf.multinomial(row, total, seed=4)
        with tf.Session() as sess:
            for i in range(4):
                classes = sess.run(draws, {row: logits[i:i + 1], total: 2 * (i + 1)})
                counts = np.eye(3, dtype=np.float32)[classes.reshape(2, -1)].sum(1)
                np.testing.assert_array_equal(rows[:, i], counts)
