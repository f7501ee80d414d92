package compose

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locktorture/locktorture/cluster"
	"github.com/locktorture/locktorture/internal/safefs"
)

// The compose file and its defaults.
const (
	File          = "docker-compose.yml" // in this package's folder
	ConfigFile    = "redis.conf"         // the nodes', beside File by default
	DefaultNet    = "172.30.117"         // the /24's first three octets without LOCKTORTURE_NET
	Nodes         = 5                    // Redis nodes the file runs
	ToxiproxyPort = 8474                 // of the toxiproxy server's API
)

// ErrNoCLI is returned when neither docker compose (v2) nor
// docker-compose answers.
var ErrNoCLI = errors.New("compose: neither 'docker compose' nor 'docker-compose' answers (install the compose plugin or docker-compose)")

// Cluster is one instance (a compose project) of the compose file.
type Cluster struct {
	Dir     string // of docker-compose.yml; required
	Project string // names the containers and network; required
	// Net is the network's /24 (nodes at .11 to .15, toxiproxy at .10);
	// default DefaultNet.
	Net    string
	Config string // the nodes' redis.conf (WriteConfig); default Dir/redis.conf
	// ClockDir holds ClockDir/nI/clock.offset, bind-mounted into node nI,
	// by which the external backend shifts its clock; default "clock"
	// beside Config.
	ClockDir string
	// The images; defaults cluster.DefaultImage and ToxiproxyImage.
	RedisImage, ToxiproxyImage string
	CLI                        []string // e.g. {"docker", "compose"}; default FindCLI's
}

// withDefaults returns c with its defaults set; it finds the CLI.
func (c Cluster) withDefaults(ctx context.Context) (Cluster, error) {
	if c.Dir == "" || c.Project == "" {
		return c, errors.New("compose: a cluster needs its folder and a project name")
	}
	c.Net = cmp.Or(c.Net, DefaultNet)
	if _, err := netip.ParsePrefix(c.Net + ".0/24"); err != nil {
		return c, fmt.Errorf("compose: network %q: want three octets, e.g. %s", c.Net, DefaultNet)
	}
	c.Config = cmp.Or(c.Config, filepath.Join(c.Dir, ConfigFile))
	var err error
	if c.Config, err = filepath.Abs(c.Config); err != nil {
		return c, fmt.Errorf("compose: %w", err)
	}
	c.ClockDir = cmp.Or(c.ClockDir, filepath.Join(filepath.Dir(c.Config), "clock"))
	if c.ClockDir, err = filepath.Abs(c.ClockDir); err != nil {
		return c, fmt.Errorf("compose: %w", err)
	}
	c.RedisImage = cmp.Or(c.RedisImage, cluster.DefaultImage)
	c.ToxiproxyImage = cmp.Or(c.ToxiproxyImage, ToxiproxyImage)
	if c.CLI == nil {
		if c.CLI, err = FindCLI(ctx); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Addrs are the nodes' addresses, host:port, n1 first.
func (c Cluster) Addrs() []string {
	out := make([]string, Nodes)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d:6379", c.net(), 11+i)
	}
	return out
}

// ToxiproxyURL is the URL of the toxiproxy server's API.
func (c Cluster) ToxiproxyURL() string {
	return fmt.Sprintf("http://%s.10:%d", c.net(), ToxiproxyPort)
}

func (c Cluster) net() string { return cmp.Or(c.Net, DefaultNet) }

// FindCLI returns the compose command that answers on this machine:
// {"docker", "compose"} (v2) or {"docker-compose"} (v1), or ErrNoCLI.
func FindCLI(ctx context.Context) ([]string, error) {
	for _, cli := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		args := append(cli[1:len(cli):len(cli)], "version")
		if err := exec.CommandContext(ctx, cli[0], args...).Run(); err == nil {
			return cli, nil
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("compose: %w", ctx.Err())
	}
	return nil, ErrNoCLI
}

// compose runs the compose CLI on the file with args.
func (c Cluster) compose(ctx context.Context, args ...string) ([]byte, error) {
	full := append(slices.Clone(c.CLI[1:]), "-p", c.Project, "-f", filepath.Join(c.Dir, File))
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, c.CLI[0], full...)
	cmd.Env = append(os.Environ(),
		"LOCKTORTURE_NET="+c.Net,
		"LOCKTORTURE_REDIS_CONF="+c.Config,
		"LOCKTORTURE_CLOCK_DIR="+c.ClockDir,
		"LOCKTORTURE_REDIS_IMAGE="+c.RedisImage,
		"LOCKTORTURE_TOXIPROXY_IMAGE="+c.ToxiproxyImage,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return out, fmt.Errorf("compose: %s %s: %w", strings.Join(c.CLI, " "), args[0], ctx.Err())
		}
		return out, fmt.Errorf("compose: %s %s: %w: %s", strings.Join(c.CLI, " "), args[0], err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// Up starts the cluster (compose up -d) and waits until every node
// answers PING with password and the toxiproxy API answers. The images
// (never pulled) and the configuration must exist. On failure the
// containers are left for Down.
func (c Cluster) Up(ctx context.Context, password string) error {
	c, err := c.withDefaults(ctx)
	if err != nil {
		return err
	}
	for _, img := range []string{c.RedisImage, c.ToxiproxyImage} {
		if err := exec.CommandContext(ctx, "docker", "image", "inspect", img).Run(); err != nil {
			return fmt.Errorf("compose: image %s: not in the Docker engine (make redis-image and make toxiproxy-image build them; nothing is pulled)", img)
		}
	}
	if fi, err := os.Stat(c.Config); err != nil {
		return fmt.Errorf("compose: the nodes' configuration: %w (compose.WriteConfig or make compose-up writes one)", err)
	} else if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("compose: %s holds the password but is mode %04o: make it 0600", c.Config, fi.Mode().Perm())
	}
	if err := c.writeClocks(); err != nil {
		return err
	}
	if _, err := c.compose(ctx, "up", "-d"); err != nil {
		return err
	}
	return c.wait(ctx, password, time.Minute)
}

// writeClocks writes each node's clock offset file (8 zero bytes, 0600, in
// a 0700 folder) unless there: a running shim maps it and must not see it
// cut short.
func (c Cluster) writeClocks() error {
	for i := range Nodes {
		dir := filepath.Join(c.ClockDir, fmt.Sprintf("n%d", i+1))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("compose: %w", err)
		}
		path := filepath.Join(dir, "clock.offset")
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 8 {
			continue
		}
		if err := os.WriteFile(path, make([]byte, 8), 0o600); err != nil {
			return fmt.Errorf("compose: %w", err)
		}
	}
	return nil
}

// wait polls ready until it passes, or fails after within.
func (c Cluster) wait(ctx context.Context, password string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		if last = c.ready(ctx, password); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("compose: the cluster is not ready after %s: %w", within, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ready returns nil when every node answers PING and toxiproxy its
// version.
func (c Cluster) ready(ctx context.Context, password string) error {
	var errs []error
	for i, addr := range c.Addrs() {
		rc := redis.NewClient(&redis.Options{Addr: addr, Password: password, DialTimeout: time.Second, ReadTimeout: time.Second,
			MaxRetries: -1, Protocol: 2, DisableIdentity: true})
		if err := rc.Ping(ctx).Err(); err != nil {
			errs = append(errs, fmt.Errorf("n%d at %s: %w", i+1, addr, err))
		}
		rc.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.ToxiproxyURL()+"/version", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: time.Second}).Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("HTTP %s", resp.Status)
		}
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("toxiproxy at %s: %w", c.ToxiproxyURL(), err))
	}
	return errors.Join(errs...)
}

// Down removes the cluster's containers and network (compose down) and
// checks that none is left.
func (c Cluster) Down(ctx context.Context) error {
	c, err := c.withDefaults(ctx)
	if err != nil {
		return err
	}
	if _, err := c.compose(ctx, "down", "-v", "--remove-orphans", "-t", "2"); err != nil {
		return err
	}
	left, err := c.Leftovers(ctx)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("compose: %s down left %s", c.Project, strings.Join(left, ", "))
	}
	return nil
}

// Leftovers lists the project's containers, networks and volumes.
func (c Cluster) Leftovers(ctx context.Context) ([]string, error) {
	label := "label=com.docker.compose.project=" + c.Project
	var left []string
	for _, what := range []struct{ kind, list, format string }{
		{"container", "ps -a", "{{.Names}}"}, {"network", "network ls", "{{.Name}}"}, {"volume", "volume ls", "{{.Name}}"},
	} {
		args := append(strings.Fields(what.list), "--filter", label, "--format", what.format)
		out, err := exec.CommandContext(ctx, "docker", args...).Output()
		if err != nil {
			return nil, fmt.Errorf("compose: docker %s: %w", strings.Join(args[:2], " "), err)
		}
		for _, name := range strings.Fields(string(out)) {
			left = append(left, what.kind+" "+name)
		}
	}
	return left, nil
}

// FreeNet returns the first /24 under 172.30.0.0/16, from third octet
// start on, that overlaps no Docker network and no local interface.
func FreeNet(ctx context.Context, start int) (string, error) {
	var used []netip.Prefix
	ids, err := exec.CommandContext(ctx, "docker", "network", "ls", "-q").Output()
	if err != nil {
		return "", fmt.Errorf("compose: docker network ls: %w", err)
	}
	if f := strings.Fields(string(ids)); len(f) > 0 {
		out, err := exec.CommandContext(ctx, "docker", append([]string{"network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}"}, f...)...).Output()
		if err != nil {
			return "", fmt.Errorf("compose: docker network inspect: %w", err)
		}
		for _, s := range strings.Fields(string(out)) {
			if p, err := netip.ParsePrefix(s); err == nil {
				used = append(used, p)
			}
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("compose: %w", err)
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			used = append(used, p)
		}
	}
	for i := range 256 {
		octet := (start + i) % 256
		p := netip.MustParsePrefix(fmt.Sprintf("172.30.%d.0/24", octet))
		if !slices.ContainsFunc(used, p.Overlaps) {
			return fmt.Sprintf("172.30.%d", octet), nil
		}
	}
	return "", errors.New("compose: no free /24 in 172.30.0.0/16")
}

// NewPassword returns a random password of 32 hex digits.
func NewPassword() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails; see its doc
	return hex.EncodeToString(b)
}

// WriteConfig writes the nodes' redis.conf at path, mode 0600, replacing
// (never writing through) a file or link there: port 6379, requirepass
// password (printable ASCII without spaces, quotes or backslashes), no
// persistence.
func WriteConfig(path, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	conf := strings.Join([]string{
		"# The configuration of every node of locktorture's deploy/compose/docker-compose.yml,",
		"# mounted as a secret at /run/secrets/redis.conf. Mode 0600: it holds the password.",
		"port 6379",
		"bind 0.0.0.0",
		"protected-mode yes",
		"requirepass " + password,
		`save ""`,
		"appendonly no",
		// For DEBUG SLEEP (nemesis server-stall); the password guards it.
		"enable-debug-command yes",
		"",
	}, "\n")
	if err := safefs.WriteFile(path, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("compose: %w", err)
	}
	return nil
}

// ReadPassword returns the password (requirepass) of the configuration
// at path.
func ReadPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("compose: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if pw, ok := strings.CutPrefix(strings.TrimSpace(line), "requirepass "); ok {
			return strings.TrimSpace(pw), nil
		}
	}
	return "", fmt.Errorf("compose: %s has no requirepass line", path)
}

func checkPassword(pw string) error {
	if pw == "" {
		return errors.New("compose: empty password")
	}
	for _, r := range pw {
		if r <= ' ' || r > '~' || r == '"' || r == '\'' || r == '\\' {
			return errors.New("compose: the password must be printable ASCII without spaces, quotes or backslashes")
		}
	}
	return nil
}
