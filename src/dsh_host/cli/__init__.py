"""The ``dsh`` command line: ``serve`` and the commands around a store.

``_main`` runs what ``_args`` parses; ``_transfer`` is ``dsh export``, ``dsh import`` and
``dsh migrate``, ``_backup`` is ``dsh backup``. Nothing in the host's heart imports this room.
"""

from ._main import main

__all__ = ["main"]
