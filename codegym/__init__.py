"""codegym: a Gymnasium suite of multi-turn, diff-native coding environments.

Importing the package registers the environment ids (see codegym.envs) and
exposes the task loaders.
"""

__version__ = "0.1.0"
