from conformance.cli._main import main

raise SystemExit(main())
