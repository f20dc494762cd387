package main

import (
	"fmt"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// Breaking returns one line per breaking change (oasdiff level ERR) that
// the current document makes to the baseline, sorted; none when the current
// document only adds to the baseline or changes its documentation. Both
// documents are OpenAPI 3.x JSON (or YAML) held in memory.
func Breaking(baseline, current []byte) ([]string, error) {
	base, err := load.NewSpecInfoFromData(openapi3.NewLoader(), baseline, "baseline")
	if err != nil {
		return nil, fmt.Errorf("loading the baseline: %w", err)
	}
	rev, err := load.NewSpecInfoFromData(openapi3.NewLoader(), current, "current")
	if err != nil {
		return nil, fmt.Errorf("loading the current document: %w", err)
	}
	for _, spec := range []*load.SpecInfo{base, rev} {
		if spec.Spec.OpenAPI == "" || spec.Spec.Paths.Len() == 0 {
			return nil, fmt.Errorf("%s is not an OpenAPI document with paths", spec.Url)
		}
	}
	report, sources, err := diff.GetWithOperationsSourcesMap(diff.NewConfig(), base, rev)
	if err != nil {
		return nil, fmt.Errorf("comparing the documents: %w", err)
	}
	changes := checker.CheckBackwardCompatibilityUntilLevel(
		checker.NewConfig(checker.GetAllChecks()), report, sources, checker.ERR)
	localize := checker.NewDefaultLocalizer()
	lines := make([]string, 0, len(changes))
	for _, change := range changes {
		lines = append(lines, fmt.Sprintf("%s %s %s: %s [%s]",
			change.GetLevel(), change.GetOperation(), change.GetPath(),
			change.GetUncolorizedText(localize), change.GetId()))
	}
	sort.Strings(lines)
	return lines, nil
}
