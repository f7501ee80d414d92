package locks

import (
	"context"
	_ "embed" // the Python clients
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// The built-in Python clients, embedded so that the binary runs them from
// any directory: each process reads its script from /dev/fd/3.
var (
	//go:embed clients/python/redispy_lock.py
	redisPyLockScript []byte
	//go:embed clients/python/redlock.py
	redLockPyScript []byte
)

// PythonEnv names the variable that chooses the built-in Python clients'
// interpreter ([PythonWithRedis]).
const PythonEnv = "LOCKTORTURE_PYTHON"

// pythonLock returns the New of the embedded Python client script
// (clients/python/), run with args.
func pythonLock(name string, script []byte, args ...string) func(Config) (Lock, error) {
	return func(cfg Config) (Lock, error) {
		py, err := PythonWithRedis()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return asLock(NewProcessLock(name, append([]string{py, "/dev/fd/3"}, args...), cfg, withScript(script)))
	}
}

// pythonCheck is the Check of the Python locks.
func pythonCheck() error {
	_, err := PythonWithRedis()
	return err
}

// python caches PythonWithRedis's answer per ($LOCKTORTURE_PYTHON, $PATH).
var python struct {
	sync.Mutex
	key  string
	path string
	err  error
	done bool
}

// PythonWithRedis returns an interpreter that can `import redis`: the one
// $LOCKTORTURE_PYTHON names, else the first `python3` along $PATH that
// can (Debian's python3-redis, which scripts/deps installs, serves the
// system interpreter, while a pyenv or virtualenv python3 earlier on the
// PATH may lack it). The answer is cached for the process.
func PythonWithRedis() (string, error) {
	env := os.Getenv(PythonEnv)
	key := env + "\x00" + os.Getenv("PATH")
	python.Lock()
	defer python.Unlock()
	if python.done && python.key == key {
		return python.path, python.err
	}
	python.key, python.done = key, true
	python.path, python.err = findPython(env)
	return python.path, python.err
}

func findPython(env string) (string, error) {
	if env != "" {
		if err := probePython(env); err != nil {
			return "", fmt.Errorf("locks: %s=%s cannot import redis: %w", PythonEnv, env, err)
		}
		return env, nil
	}
	seen := map[string]bool{}
	var tried []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, "python3")
		st, err := os.Stat(path)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		if probePython(path) == nil {
			return path, nil
		}
		tried = append(tried, path)
	}
	if len(tried) == 0 {
		return "", errors.New("locks: no python3 on the PATH; the Python locks need one that can import redis (Debian: apt-get install python3-redis, which scripts/deps does)")
	}
	return "", fmt.Errorf("locks: no python3 on the PATH can import redis (tried %v): apt-get install python3-redis (scripts/deps does), or pip install redis, or set %s", tried, PythonEnv)
}

func probePython(py string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", "import redis").CombinedOutput()
	if err != nil && len(out) > 0 {
		last := &tail{max: 200}
		last.Write(out)
		return fmt.Errorf("%w: %s", err, last)
	}
	return err
}
