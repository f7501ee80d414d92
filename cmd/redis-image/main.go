package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/locktorture/locktorture/cluster"
	_ "github.com/locktorture/locktorture/cluster/docker" // the engine BuildImage builds on
	"github.com/locktorture/locktorture/internal/cli"
)

func main() {
	cli.Main("redis-image", func(ctx context.Context, args []string) error { return run(ctx, args, os.Stdout) })
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("redis-image", flag.ContinueOnError)
	fs.SetOutput(stdout)
	tag := fs.String("tag", cluster.DefaultImage, "tag of the image to build")
	server := fs.String("redis-server", "redis-server", "redis-server binary to put in the image: a path or a name looked up in PATH")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := cluster.BuildImage(ctx, *tag, cluster.WithRedisServer(*server)); err != nil {
		return err
	}
	// The size as the engine reports it, for people; not worth failing over.
	size, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", "{{.Size}}", *tag).Output()
	if err != nil {
		size = []byte("?")
	}
	fmt.Fprintf(stdout, "built %s (%s bytes) from this host's redis-server, its libraries and the clock shim\n", *tag, strings.TrimSpace(string(size)))
	return nil
}
