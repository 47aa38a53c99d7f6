"""The bird card game studies: their specs (``*.toml``), the shipped policy (``policy/``)
and ``train_policy``, the training job of the bird game's linear softmax policy
(``arena train-birds``).
"""
