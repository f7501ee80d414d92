// Command compose-cluster builds the toxiproxy image of, starts and stops
// the cluster of deploy/compose/docker-compose.yml, for torture run
// --backend external; run it from the repository's root (see usage in
// main.go). up writes a missing configuration (0600; the password from
// $LOCKTORTURE_PASSWORD or random) and prints the torture command for the
// cluster, without the password; down checks nothing is left. Exit
// status 2 and one line on an error.
//
// It imports deploy/compose (the cluster) and internal/cli (its main).
package main
