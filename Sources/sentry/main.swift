import SentryCommands

SentryCommand.main()
