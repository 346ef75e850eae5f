"""`python -m ember.checkpoint info FILE` (see `ember/checkpoint/__init__.py`)."""
import sys

from . import main

sys.exit(main())
