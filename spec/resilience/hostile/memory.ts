/**
 * Memory as the hostile-server suite measures it: the JS heap plus the memory
 * held by ArrayBuffers (Buffers live outside the heap), after a full GC, so
 * only what is still referenced counts.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Bytes held after full collections (the second frees the Buffers whose owners the first collected). */
export function retainedBytes(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

export const MiB = 1024 * 1024;
