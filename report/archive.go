package report

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/locktorture/locktorture/internal/safefs"
)

// ManifestFile lists a bundle's archives, which travel apart from the
// tree (no file over 1 MB enters it), for `torture matrix fetch`.
const ManifestFile = "archives.json"

// Manifest lists a bundle's archives.
type Manifest struct {
	Archives []Archive `json:"archives"`
}

// Archive is one archive of a bundle and where it can be fetched.
type Archive struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Sources are tried in order: "git:COMMIT:PATH", a blob of the
	// bundle's repository (where archives were committed before), or an
	// https URL (a release asset or a CI artifact).
	Sources []string `json:"sources,omitempty"`
}

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	gitSource = regexp.MustCompile(`^git:([0-9a-f]{7,64}):([A-Za-z0-9._/-]+)$`)
)

// GitSource splits a "git:COMMIT:PATH" source; ok is false for anything
// else, or a path that leaves the repository or starts with a dash.
func GitSource(src string) (commit, rel string, ok bool) {
	m := gitSource.FindStringSubmatch(src)
	if m == nil || safefs.Local(m[2]) != nil || strings.HasPrefix(m[2], "-") {
		return "", "", false
	}
	return m[1], m[2], true
}

// check refuses a name outside the bundle's folder, a malformed sha256
// and a source neither a git blob nor https.
func (a Archive) check() error {
	if a.Name == "" || a.Name != path.Base(a.Name) || a.Name == "." || a.Name == ".." || a.Name == ManifestFile {
		return fmt.Errorf("archive name %q is not a plain file name", a.Name)
	}
	if !sha256Hex.MatchString(a.SHA256) {
		return fmt.Errorf("archive %s: sha256 %q is not 64 lowercase hex digits", a.Name, a.SHA256)
	}
	for _, s := range a.Sources {
		if _, _, ok := GitSource(s); !ok && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("archive %s: source %q is neither git:COMMIT:PATH nor an https URL", a.Name, s)
		}
	}
	return nil
}

// Verify returns nil when b is the archive: its size and sha256.
func (a Archive) Verify(b []byte) error {
	if got := NewArchive(a.Name, b); got.SHA256 != a.SHA256 || got.Size != a.Size {
		return fmt.Errorf("archive %s: sha256 %s of %d bytes, want %s of %d bytes", a.Name, got.SHA256, len(b), a.SHA256, a.Size)
	}
	return nil
}

// NewArchive is the manifest entry of the archive name whose bytes are b.
func NewArchive(name string, b []byte, sources ...string) Archive {
	sum := sha256.Sum256(b)
	return Archive{Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b)), Sources: sources}
}

// ReadManifest reads the bundle's ManifestFile (no link followed).
func ReadManifest(bundle string) (Manifest, error) {
	m, err := readJSON[Manifest](bundle, ManifestFile)
	if err != nil {
		return m, err
	}
	for _, a := range m.Archives {
		if err := a.check(); err != nil {
			return m, fmt.Errorf("report: %s: %w", ManifestFile, err)
		}
	}
	return m, nil
}

// WriteManifest writes m as the bundle's ManifestFile.
func WriteManifest(bundle string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return safefs.WriteFile(path.Join(bundle, ManifestFile), append(b, '\n'), 0o644)
}

// Recheck holds a runs archive's results.json against the summary's
// verdicts; it returns the runs compared and the histories kept.
func Recheck(m Matrix, archive []byte) (runs, histories int, err error) {
	zr, err := xz.NewReader(bytes.NewReader(archive))
	if err != nil {
		return 0, 0, fmt.Errorf("report: recheck: %w", err)
	}
	results := map[string]Results{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("report: recheck: %w", err)
		}
		switch path.Base(hdr.Name) {
		case HistoryFile:
			histories++
		case "results.json":
			var r Results
			if err := json.NewDecoder(tr).Decode(&r); err != nil {
				return 0, 0, fmt.Errorf("report: recheck: %s: %w", Printable(hdr.Name), err)
			}
			results[path.Dir(hdr.Name)] = r
		}
	}
	var errs []error
	for _, c := range m.Cells {
		for _, run := range c.Runs {
			if run.Dir == "" {
				continue
			}
			r, ok := results[path.Clean(strings.ReplaceAll(run.Dir, "\\", "/"))]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("cell %s: run %s: no results.json in the archive", c.Name, Printable(run.RunID)))
			case r.Lease != run.Lease || r.Resource != run.Resource:
				errs = append(errs, fmt.Errorf("cell %s: run %s: the archive says lease %s, resource %s; the summary %s, %s", c.Name, Printable(run.RunID), r.Lease, r.Resource, run.Lease, run.Resource))
			}
			runs++
		}
	}
	if len(errs) > 0 {
		return runs, histories, fmt.Errorf("report: recheck: %w", errors.Join(errs...))
	}
	return runs, histories, nil
}
