package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/locktorture/locktorture/matrix"
	"github.com/locktorture/locktorture/report"
)

// mergeCmd is 'torture matrix merge OUT DIR...': it joins the outputs of
// the shards of one matrix into OUT and judges the cells, with the exit
// status of a whole matrix.
func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("matrix merge", flag.ContinueOnError)
	unknown := fs.Bool("allow-unknown-commit", false, "merge shards that record no commit (binaries built without a VCS stamp) when you know one binary ran them all; the merged summaries say the commit is unknown")
	if err := parseFlagsAbout(fs, args, stdout, "torture matrix merge [--allow-unknown-commit] OUT DIR...: join the output directories of every shard of one matrix ('torture matrix --shard i/n', same commit, cells, seeds and duration) into OUT, which must not exist or be empty, and judge the cells as a whole matrix. Shards may come from elsewhere: a symbolic link, a special file or a run directory outside a shard's runs/ is refused, and a refused merge leaves OUT as it was"); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("matrix merge: want OUT and at least one shard directory: torture matrix merge OUT DIR...")
	}
	out, dirs := fs.Arg(0), fs.Args()[1:]
	var opts []matrix.MergeOption
	if *unknown {
		opts = append(opts, matrix.AcceptUnknownCommit())
	}
	m, err := matrix.Merge(out, dirs, opts...)
	if errors.Is(err, matrix.ErrUnknownCommit) {
		return fmt.Errorf("%w; if one binary ran every shard, --allow-unknown-commit merges them", err)
	}
	if err != nil {
		return err
	}
	if m.Commit == report.UnknownCommit {
		fmt.Fprintf(stderr, "warning: the shards record no commit (--allow-unknown-commit): the merged summaries say the commit is unknown\n")
	}
	if m.Dirty {
		fmt.Fprintf(stderr, "warning: the shards ran commit %s with uncommitted changes: the merge cannot tell whether they ran the same code\n", m.Commit)
	}
	fmt.Fprintf(stderr, "merged %d shards → %s\n", len(dirs), out)
	printMatrix(stdout, m, out)
	if m.Interrupted {
		return fmt.Errorf("matrix merge: a shard was interrupted: %d of %d cells never ran, %d more did not run every seed to its end (see %s)",
			len(m.NeverRan()), len(m.Cells), incomplete(m)-len(m.NeverRan()), filepath.Join(out, "summary.md"))
	}
	return matrixErr(m)
}
