"""One conformance suite, parametrised over every channel adapter (see ``drivers.py``)."""
