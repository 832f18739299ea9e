"""Redis stores (the ``redis`` extra): ``sessions``, ``tasks``, ``broker``."""
