module github.com/locktorture/locktorture/bugs/gozero-reacquire

go 1.26.0

require github.com/zeromicro/go-zero v1.3.1

require (
	github.com/cespare/xxhash/v2 v2.1.2 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/go-redis/redis/v8 v8.11.4 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	go.opentelemetry.io/otel v1.3.0 // indirect
	go.opentelemetry.io/otel/trace v1.3.0 // indirect
	go.uber.org/automaxprocs v1.4.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)

require github.com/locktorture/locktorture/bugs/lineproto v0.0.0

replace github.com/locktorture/locktorture/bugs/lineproto => ../lineproto
