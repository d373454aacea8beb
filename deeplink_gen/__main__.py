from deeplink_gen.cli import main

main()
