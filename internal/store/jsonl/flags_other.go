//go:build !unix

package jsonl

// oNoFollow is 0 where the platform has no O_NOFOLLOW: Chat then checks the opened file is regular.
const oNoFollow = 0

// oNonBlock is 0 where the platform has no O_NONBLOCK for open.
const oNonBlock = 0
