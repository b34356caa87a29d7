from oracle_guard.commands.cli import main

raise SystemExit(main())
