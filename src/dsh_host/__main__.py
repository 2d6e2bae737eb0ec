"""``python -m dsh_host`` is the ``dsh`` command."""

from .cli import main

raise SystemExit(main())
