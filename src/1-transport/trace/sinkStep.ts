// A trace file sink's constants (traceFileSink.ts), beside where its rules will be.

/**
 * The buffer lines are encoded into: fuller than this less a line, it is written out. It bounds what is held: a slow
 * disk blocks the taker in `writeSync` (the informer waits), it never queues (a pipe's reader does: PIPE_QUEUE_BYTES).
 */
export const BUFFER_BYTES = 256 * 1024;

/**
 * The most bytes held for a pipe's reader (a FIFO, `-o /dev/stdout` into a pipe) that has not taken them: a pipe is
 * written without blocking (a reader that stops reading would hold the thread in `write`, deaf to signals), and a line
 * that would pass this fails as a full disk does. 16 MiB: minutes of a busy watch for a reader that is merely slow.
 */
export const PIPE_QUEUE_BYTES = 16 * 1024 * 1024;
