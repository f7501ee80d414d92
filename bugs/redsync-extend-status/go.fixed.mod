module github.com/locktorture/locktorture/bugs/redsync-extend-status

go 1.26.0

require (
	github.com/go-redis/redis/v8 v8.11.5
	github.com/go-redsync/redsync/v4 v4.0.4
)

require (
	github.com/cespare/xxhash/v2 v2.1.2 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.0 // indirect
)

require github.com/locktorture/locktorture/bugs/lineproto v0.0.0

replace github.com/locktorture/locktorture/bugs/lineproto => ../lineproto
