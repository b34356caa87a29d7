from hooks.cli import main

raise SystemExit(main())
