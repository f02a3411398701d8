/** The replicas' election timing (examples/ha/replica.ts), also what examples/ha/main.ts and spec/leaderelection/ha.spec.ts judge the handover by. */
export const timing = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 };
