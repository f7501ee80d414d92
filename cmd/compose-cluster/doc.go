// Command compose-cluster starts and stops the multi-host cluster of
// deploy/compose/docker-compose.yml (five Redis nodes and a toxiproxy
// server on a private network) and builds its toxiproxy image, for
// torture run --backend external. Run it from the repository's root:
//
//	compose-cluster toxiproxy-image [-tag locktorture/toxiproxy:local]
//	compose-cluster up   [-project locktorture] [-net 172.30.117] [-config deploy/compose/redis.conf]
//	compose-cluster down [-project locktorture] [-net 172.30.117]
//
// up writes a missing configuration (0600, the password from
// $LOCKTORTURE_PASSWORD or random), starts the cluster, waits until it
// answers and prints the torture command for it, without the password.
// down removes it and checks nothing is left. Exit status 2 and one line
// on an error.
//
// It imports deploy/compose (the cluster) and internal/cli (its main).
package main
