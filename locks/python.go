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

// PythonEnv names the environment variable that chooses the interpreter
// of the built-in Python clients (redis-py-lock, redlock-py); see
// [PythonWithRedis].
const PythonEnv = "LOCKTORTURE_PYTHON"

// newRedisPyLock builds "redis-py-lock": redis-py's Lock, used as its
// documentation says (clients/python/redispy_lock.py).
func newRedisPyLock(cfg Config) (Lock, error) {
	return newPythonLock("redis-py-lock", redisPyLockScript, cfg)
}

// newRedLockPy builds "redlock-py": RedLock as the Redis page describes
// it, in Python over redis-py (clients/python/redlock.py).
func newRedLockPy(cfg Config) (Lock, error) {
	return newPythonLock("redlock-py", redLockPyScript, cfg)
}

// newRedLockPyWall builds "redlock-py-wall": redlock-py's script with
// --wall, which counts the time elapsed in a round with time.time(), the
// wall clock, as the redlock-py library does; a wall-clock jump on the
// client moves its validity (the client-clock fault kind).
func newRedLockPyWall(cfg Config) (Lock, error) {
	return newPythonLock("redlock-py-wall", redLockPyScript, cfg, "--wall")
}

func newPythonLock(name string, script []byte, cfg Config, args ...string) (Lock, error) {
	py, err := PythonWithRedis()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return asLock(NewProcessLock(name, append([]string{py, "/dev/fd/3"}, args...), cfg, withScript(script)))
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
// $LOCKTORTURE_PYTHON names, when set; otherwise the first `python3`
// along $PATH that can. The first `python3` on the PATH is not always the
// one that has redis-py: Debian's python3-redis (which scripts/deps
// installs) serves the system interpreter, while a pyenv or virtualenv
// python3 earlier on the PATH may lack it; searching the whole PATH finds
// the system one without naming a machine's path. The answer is cached
// for the process.
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

// probePython runs `py -c "import redis"`.
func probePython(py string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", "import redis").CombinedOutput()
	if err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%w: %s", err, lastLine(out))
		}
		return err
	}
	return nil
}

func lastLine(b []byte) string {
	t := &tail{max: 200}
	t.Write(b)
	return t.String()
}
