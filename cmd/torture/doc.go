// Command torture runs torture tests against Redis locks and checks
// recorded histories.
//
//	torture run   [flags]   run one test, write <out>/<run-id>/
//	torture check DIR|FILE  re-check a stored run or a bare history
//
// Exit status: 0 when every verdict is valid, 1 on a safety violation, 2
// when a verdict is unknown or on an error.
package main
