from sparklance.cli import main

raise SystemExit(main())
