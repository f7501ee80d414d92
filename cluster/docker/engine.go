package docker

import (
	"context"
	"errors"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/locktorture/locktorture/cluster"
)

func init() { cluster.RegisterContainerEngine(engine{}) }

const (
	imageData = cluster.ImageData // where a node's folder is mounted
	tailLines = 10                // lines of a container's output quoted in errors
)

var errPortTaken = cluster.ErrPortTaken

// engine is the environment's Docker engine (DOCKER_HOST, the default
// socket, ...), reached with testcontainers-go.
type engine struct{}

var _ cluster.ContainerEngine = engine{}
var _ cluster.StaleRemover = engine{}

// RemoveStale is RemoveStaleContainers, for cluster.Open.
func (engine) RemoveStale(ctx context.Context) ([]string, error) { return RemoveStaleContainers(ctx) }

func (engine) Host(ctx context.Context) (string, error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return "", err
	}
	host := cli.DaemonHost()
	if err := cli.Close(); err != nil {
		return "", fmt.Errorf("cluster: docker: %w", err)
	}
	return host, nil
}

func (engine) ImageLabels(ctx context.Context, image string) (map[string]string, error) {
	cli, err := newDockerClient(ctx)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	img, err := cli.ImageInspect(ctx, image)
	if cerrdefs.IsNotFound(err) {
		return nil, fmt.Errorf("cluster: image %s %w", image, cluster.ErrNoImage)
	} else if err != nil {
		return nil, fmt.Errorf("cluster: inspect image %s: %w", image, err)
	}
	if img.Config == nil {
		return nil, nil
	}
	return img.Config.Labels, nil
}

// Open connects, removes what dead processes left (RemoveStaleContainers)
// and, with network, creates the cluster's own.
func (engine) Open(ctx context.Context, image string, network bool) (cluster.ContainerSet, error) {
	b, err := newDockerBackend(ctx, image)
	if err != nil {
		return nil, err
	}
	if _, err := RemoveStaleContainers(ctx); err != nil {
		return nil, errors.Join(err, b.Close(ctx))
	}
	if network {
		if err := b.createNetwork(ctx); err != nil {
			return nil, errors.Join(err, b.Close(context.WithoutCancel(ctx)))
		}
	}
	return b, nil
}

var _ cluster.ContainerSet = (*dockerBackend)(nil)
