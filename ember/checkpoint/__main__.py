"""`python -m ember.checkpoint info FILE` (see `ember/checkpoint/__init__.py`)."""
import sys

from . import main

if __name__ == "__main__":  # importing this module (a documentation tool does) runs nothing
    sys.exit(main())
