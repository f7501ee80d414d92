package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/locktorture/locktorture/deploy/compose"
	"github.com/locktorture/locktorture/internal/cli"
)

const usage = `usage: compose-cluster <command> [flags]   (from the repository's root)

commands:
  toxiproxy-image  build the toxiproxy server's image from the version in go.mod (nothing is pulled)
  up               start the five nodes and the toxiproxy server of deploy/compose/docker-compose.yml
  down             stop and remove them, and check that nothing is left

'compose-cluster <command> -h' lists its flags.
`

func main() {
	cli.Main("compose-cluster", func(ctx context.Context, args []string) error { return run(ctx, args, os.Stdout) })
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stdout)
	switch args[0] {
	case "toxiproxy-image":
		tag := fs.String("tag", compose.ToxiproxyImage, "tag of the image to build")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if err := compose.BuildToxiproxyImage(ctx, *tag); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "built %s: toxiproxy's server from the version in go.mod, static, FROM scratch\n", *tag)
		return nil
	case "up", "down":
		c := compose.Cluster{Dir: filepath.Join("deploy", "compose")}
		fs.StringVar(&c.Project, "project", "locktorture", "compose project name (containers and network are named after it)")
		net := os.Getenv("LOCKTORTURE_NET")
		if net == "" {
			net = compose.DefaultNet
		}
		fs.StringVar(&c.Net, "net", net, "first three octets of the network's /24 subnet (default $LOCKTORTURE_NET, else "+compose.DefaultNet+")")
		fs.StringVar(&c.Config, "config", filepath.Join(c.Dir, compose.ConfigFile), "the nodes' redis.conf (mode 0600; written with a password when missing)")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(c.Dir, compose.File)); err != nil {
			return fmt.Errorf("%w (run compose-cluster from the repository's root)", err)
		}
		if args[0] == "down" {
			if err := c.Down(ctx); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "cluster %s down: no container, network or volume of it left\n", c.Project)
			return nil
		}
		return up(ctx, c, stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q (want toxiproxy-image, up or down)", args[0])
}

// up writes the configuration when it is missing, starts the cluster
// and prints how to run torture against it.
func up(ctx context.Context, c compose.Cluster, stdout io.Writer) error {
	env := os.Getenv("LOCKTORTURE_PASSWORD")
	pw, err := compose.ReadPassword(c.Config)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pw = env
		if pw == "" {
			pw = compose.NewPassword()
		}
		if err := compose.WriteConfig(c.Config, pw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (mode 0600) with the nodes' password\n", c.Config)
	case err != nil:
		return err
	case env != "" && env != pw:
		return fmt.Errorf("$LOCKTORTURE_PASSWORD differs from the password in %s: unset it, or write the configuration anew", c.Config)
	}
	if err := c.Up(ctx, pw); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "cluster %s up: nodes %s; toxiproxy %s\n\n", c.Project, strings.Join(c.Addrs(), ","), c.ToxiproxyURL())
	fmt.Fprintf(stdout, "export LOCKTORTURE_PASSWORD=\"$(sed -n 's/^requirepass //p' %s)\"\n", c.Config)
	fmt.Fprintf(stdout, "bin/torture run --backend external --nodes %s --toxiproxy %s --lock redlock --nemesis partition,latency --nemesis-interval 1s --duration 10s\n",
		strings.Join(c.Addrs(), ","), c.ToxiproxyURL())
	return nil
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}
