from lore_sidecar.cli import main

raise SystemExit(main())
