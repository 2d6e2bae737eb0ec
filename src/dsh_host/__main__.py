"""``python -m dsh_host`` is the ``dsh`` command."""

from ._cli import main

raise SystemExit(main())
