# Command-line cases (sourced by run.sh). check NAME RC PATTERN -- ARGS
check version 0 '^conveyor [0-9]+\.[0-9]+' -- --version
check help 0 'commands:' -- --help
check no-args 2 'usage' --
check unknown-command 2 "unknown command 'frobnicate'" -- frobnicate
check demo-bad-option 2 'Unknown option' -- demo --no-such-option
check demo-runs 0 'events/s' -- demo -n 1000
