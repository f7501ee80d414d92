package cluster

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultImage is the image BuildImage builds and the docker backend runs
// by default.
const DefaultImage = "locktorture/redis:local"

// Labels of the images BuildImage builds.
const (
	LabelClockShim    = "io.locktorture.clockshim"     // the shim's path inside: it runs WithClockShim
	LabelRedisVersion = "io.locktorture.redis-version" // its redis-server's version
)

// Paths inside the images BuildImage builds.
const (
	imageRedisServer = "/usr/bin/redis-server"
	imageClockShim   = "/usr/lib/locktorture/clockshim.so"
)

// ImageData is the images' working directory, where the docker backend
// mounts each node's folder.
const ImageData = "/data"

// BuildImage builds the image tag (DefaultImage if "") FROM scratch out of
// this host's redis-server (WithRedisServer's, the only option that
// applies), the libraries ldd lists for it and the clock shim (its path
// under LabelClockShim), pulling nothing, with "docker build" against the
// engine StartDocker uses; a failed build's output is in the error.
func BuildImage(ctx context.Context, tag string, opts ...Option) error {
	tag = cmp.Or(tag, DefaultImage)
	e, err := containerEngine()
	if err != nil {
		return err
	}
	o, err := newOptions(1, opts)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "locktorture-image-")
	if err != nil {
		return fmt.Errorf("cluster: image: %w", err)
	}
	defer os.RemoveAll(dir)
	version, err := writeImageContext(ctx, dir, o.redisServer)
	if err != nil {
		return err
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		return fmt.Errorf("cluster: image: %w", err)
	}
	// testcontainers may settle on another engine than the docker CLI's
	// (the default socket when DOCKER_HOST does not answer).
	host, err := e.Host(ctx)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, docker, "build", "--label", LabelRedisVersion+"="+version, "-t", tag, dir)
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host, "DOCKER_CONTEXT=")
	if out, err := cmd.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("cluster: docker build %s: %w", tag, ctx.Err())
		}
		return fmt.Errorf("cluster: docker build %s: %w\n%s", tag, err, out)
	}
	return nil
}

// writeImageContext writes BuildImage's context into dir and returns
// redis-server's version.
func writeImageContext(ctx context.Context, dir, redisServer string) (string, error) {
	bin, err := exec.LookPath(redisServer)
	if err != nil {
		return "", fmt.Errorf("cluster: image: redis-server: %w", err)
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return "", fmt.Errorf("cluster: image: %w", err)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("cluster: image: %s --version: %w", bin, err)
	}
	m := regexp.MustCompile(`v=(\S+)`).FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("cluster: image: %s --version: no version in %q", bin, out)
	}
	version := string(m[1])
	libs, err := sharedLibraries(ctx, bin)
	if err != nil {
		return "", err
	}
	shim, err := clockShim()
	if err != nil {
		return "", err
	}
	root := filepath.Join(dir, "root")
	files := map[string]string{imageRedisServer: bin, imageClockShim: shim} // in the image: on the host
	for _, l := range libs {
		files[l] = l
	}
	for dst, src := range files {
		if err := copyFile(filepath.Join(root, dst), src); err != nil {
			return "", err
		}
	}
	for _, d := range []string{ImageData, "/tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o777); err != nil {
			return "", fmt.Errorf("cluster: image: %w", err)
		}
		if err := os.Chmod(filepath.Join(root, d), 0o777|os.ModeSticky); err != nil {
			return "", fmt.Errorf("cluster: image: %w", err)
		}
	}
	dockerfile := strings.Join([]string{
		"# Written by locktorture's cluster.BuildImage from files of the build host.",
		"FROM scratch",
		"COPY root/ /",
		fmt.Sprintf("LABEL %s=%s", LabelClockShim, imageClockShim),
		"WORKDIR " + ImageData,
		"EXPOSE 6379",
		fmt.Sprintf("ENTRYPOINT [%q]", imageRedisServer),
	}, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return "", fmt.Errorf("cluster: image: %w", err)
	}
	return version, nil
}

// sharedLibraries returns the absolute paths that ldd lists for bin, its
// dynamic loader included, sorted.
func sharedLibraries(ctx context.Context, bin string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "ldd", bin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if strings.Contains(string(out)+stderr.String(), "not a dynamic executable") {
		return nil, nil // static: nothing to copy
	} else if err != nil {
		return nil, fmt.Errorf("cluster: image: ldd %s: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
	}
	var libs []string
	for s := bufio.NewScanner(bytes.NewReader(out)); s.Scan(); {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
		// "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
		line := strings.TrimSpace(s.Text())
		if _, after, ok := strings.Cut(line, "=>"); ok {
			line = strings.TrimSpace(after)
		}
		if f := strings.Fields(line); len(f) > 0 && filepath.IsAbs(f[0]) {
			libs = append(libs, f[0])
		} else if strings.Contains(line, "not found") {
			return nil, fmt.Errorf("cluster: image: ldd %s: %s", bin, s.Text())
		}
	}
	slices.Sort(libs)
	return slices.Compact(libs), nil
}

// copyFile copies src (links followed) to dst, creating its directory,
// keeping its mode.
func copyFile(dst, src string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("cluster: image: %w", err)
		}
	}()
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// ensureImage makes sure the engine has image, building it (BuildImage,
// one line to log before and after) when it is buildable (DefaultImage);
// any other missing image is an error: someone chose it, and building it
// would be a guess.
func ensureImage(ctx context.Context, image, buildable string, log io.Writer, opts []Option) error {
	e, err := containerEngine()
	if err != nil {
		return err
	}
	_, err = e.ImageLabels(ctx, image)
	if err == nil || !errors.Is(err, ErrNoImage) || image != buildable {
		return err
	}
	if log != nil {
		fmt.Fprintf(log, "building the docker image %s from this host's redis-server (once; make redis-image does the same)\n", image)
	}
	start := time.Now()
	if err := BuildImage(ctx, image, opts...); err != nil {
		return err
	}
	if log != nil {
		fmt.Fprintf(log, "built %s in %.1f s\n", image, time.Since(start).Seconds())
	}
	return nil
}
