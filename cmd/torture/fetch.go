package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/locktorture/locktorture/internal/safefs"
	"github.com/locktorture/locktorture/report"
)

// fetchCmd is `torture matrix fetch BUNDLE...`: each archive of a bundle's
// manifest (report.ManifestFile) fetched, its sha256 checked, and re-checked
// against the bundle's summary (report.Recheck).
func fetchCmd(fs *flag.FlagSet) runFunc {
	from := fs.String("from", "", "fetch only from sources of this kind: git (a blob of this repository's history) or https (a release asset); by default git first, then https")
	keep := fs.Bool("keep", true, "write each archive into its bundle's folder (false: fetch, verify and re-check only)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if *from != "" && *from != "git" && *from != "https" {
			return fmt.Errorf("matrix fetch: --from %q: want git or https", *from)
		}
		if fs.NArg() == 0 {
			return errors.New("matrix fetch: want a published bundle: torture matrix fetch [--from git|https] BUNDLE...")
		}
		for _, dir := range fs.Args() {
			if err := fetchBundle(ctx, dir, *from, *keep, stdout); err != nil {
				return fmt.Errorf("matrix fetch: %s: %w", dir, err)
			}
		}
		return nil
	}
}

// fetchBundle fetches, verifies and re-checks every archive of the bundle
// dir.
func fetchBundle(ctx context.Context, dir, from string, keep bool, stdout io.Writer) error {
	man, err := report.ReadManifest(dir)
	if err != nil {
		return err
	}
	m, err := report.ReadMatrix(dir)
	if err != nil {
		return err
	}
	for _, a := range man.Archives {
		b, src, err := fetchArchive(ctx, dir, a, from)
		if err != nil {
			return err
		}
		if keep && src != "" {
			if err := safefs.WriteFile(filepath.Join(dir, a.Name), b, 0o644); err != nil {
				return err
			}
		}
		runs, histories, err := report.Recheck(m, b)
		if err != nil {
			return err
		}
		if src == "" {
			src = "already in the bundle"
		}
		fmt.Fprintf(stdout, "%s: sha256 %s… verified (%s); %d runs with the verdicts summary.json gives, %d histories\n",
			filepath.Join(dir, a.Name), a.SHA256[:12], src, runs, histories)
	}
	return nil
}

// fetchArchive returns a: the bundle's own copy when it verifies (src ""),
// else the first source of kind from whose bytes verify.
func fetchArchive(ctx context.Context, dir string, a report.Archive, from string) (b []byte, src string, err error) {
	if b, err := safefs.ReadFileIn(dir, a.Name); err == nil && a.Verify(b) == nil {
		return b, "", nil
	}
	var order []string
	for _, kind := range []string{"git", "https"} {
		for _, s := range a.Sources {
			if strings.HasPrefix(s, kind+":") && (from == "" || from == kind) {
				order = append(order, s)
			}
		}
	}
	var errs []error
	for _, s := range order {
		b, err := fetchSource(ctx, dir, s, a.Size)
		if err == nil {
			err = a.Verify(b)
		}
		if err == nil {
			return b, s, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", s, err))
	}
	if len(order) == 0 {
		errs = append(errs, fmt.Errorf("no source of kind %q", from))
	}
	return nil, "", fmt.Errorf("archive %s: %w", a.Name, errors.Join(errs...))
}

// fetchSource reads the source s of an archive of size bytes: a blob of the
// git repository holding dir, or an https URL.
func fetchSource(ctx context.Context, dir, s string, size int64) ([]byte, error) {
	if commit, rel, ok := report.GitSource(s); ok {
		out, err := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "blob", commit+":"+rel).Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("git cat-file: %s", strings.TrimSpace(string(ee.Stderr)))
		}
		return out, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, size+1))
}
