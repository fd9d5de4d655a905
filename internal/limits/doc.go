// Package limits holds the typed resource-limit error every layer reports
// when a request would exceed a bound (spec/surfaces.md §2.5
// `resource_limit{resource, limit, actual}`), and Budget, the byte budget
// one query's working memory is charged against.
//
// Promises: a limit is checked before the memory it guards is allocated,
// so exceeding it never takes the process down; the error names the
// resource, the limit and what was asked for; a nil *Budget is unlimited.
package limits
