"""tf.metrics: TF1's streaming metrics, each a (value, update_op) pair over local variables.

Families: running means and errors (means.py), counts with precision and recall (counts.py),
counts at thresholds (thresholds.py), curves such as AUC (curves.py), ranking metrics @k
(ranking.py) and per-class metrics (classes.py).
"""
from tensorweave.metrics.classes import *
from tensorweave.metrics.counts import *
from tensorweave.metrics.curves import *
from tensorweave.metrics.means import *
from tensorweave.metrics.ranking import *
from tensorweave.metrics.thresholds import *
