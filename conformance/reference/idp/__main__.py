from conformance.reference.idp import main

main()
