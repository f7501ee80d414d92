package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// trackerRef is a bare tracker number: "#" and digits after the start of
// a line, a space or a bracket, not part of a markdown anchor (a number
// followed by a dash and words) or a colour (hex digits and letters).
// Explain's numbering of a run's faults ("fault" and its number) is not
// one.
var trackerRef = regexp.MustCompile(`(?:^|[\s(\[])#[0-9]+(?:[^\w-]|$)`)

// TestNoTrackerNumbers: no Go file, markdown page, Makefile, workflow or
// script outside results/ (published bundles, kept as written) cites an
// issue by its bare number, which means nothing to a reader: the reason
// is written instead, and an upstream issue is named with its project
// ("redsync issue 72").
func TestNoTrackerNumbers(t *testing.T) {
	var found []string
	// Other packages' tests make and remove files in the tree while this
	// one reads it; a walk that met one vanishing starts again.
	var err error
	for try := 0; try == 0 || errors.Is(err, fs.ErrNotExist) && try < 5; try++ {
		found, err = trackerRefs()
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("a bare tracker number (write the reason instead): %s", f)
	}
}

// trackerRefs walks the tree for bare tracker numbers (see
// TestNoTrackerNumbers).
func trackerRefs() ([]string, error) {
	var found []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			switch {
			case rel == "results", rel == "bin", d.Name() == "node_modules", rel != "." && strings.HasPrefix(d.Name(), "."):
				if d.Name() != ".github" {
					return filepath.SkipDir
				}
			}
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, ".go"), strings.HasSuffix(name, ".md"), strings.HasSuffix(name, ".yml"), strings.HasSuffix(name, ".sh"), name == "Makefile":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range trackerRef.FindAllStringIndex(line, -1) {
				if before := strings.ToLower(line[:m[0]+1]); strings.HasSuffix(strings.TrimSpace(before), "fault") {
					continue
				}
				found = append(found, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	return found, err
}

// TestTrackerRefPattern: the pattern tells a tracker number from a
// colour, an anchor and an HTML entity (the samples spell "#" as \x23,
// so that this file passes TestNoTrackerNumbers).
func TestTrackerRefPattern(t *testing.T) {
	for line, want := range map[string]bool{
		"// the node observer (\x2315): one per node": true,
		"\tWait: true, // \x2316":                     true,
		"\x2314: targeted kinds":                      true,
		"redsync \x2372":                              true,
		"see [\x233]":                                 true,
		`color:#222}`:                                 false,
		`"#16a34a", "#111"`:                           false,
		"[4. Start-up](#4-start-up)":                  false,
		"the client&#39;s clock":                      false,
		"redsync issue 72":                            false,
	} {
		if got := trackerRef.MatchString(line); got != want {
			t.Errorf("%q: match %v, want %v", line, got, want)
		}
	}
}
