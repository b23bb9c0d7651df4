from nerve.cli import main

main()
