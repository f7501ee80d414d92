package main

// passwordEnv holds the external nodes' password. There is no flag for
// it: a command line is readable by every local user (/proc/PID/cmdline),
// a process's environment only by its own user.
const passwordEnv = "LOCKTORTURE_PASSWORD"
