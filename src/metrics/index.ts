export { informerMetrics$, type InformerMetrics } from './informerMetrics.ts';
export { approximateBytes } from './approximateBytes.ts';
export { serve, type Served, type ServeOptions, type Serving } from './serve.ts';
export {
  controllerFamilies,
  handlerFamilies,
  HANDLER_METRIC_NAMES,
  healthFamilies,
  informerFamilies,
  promClientMetrics,
  toPrometheusText,
  transportFamilies,
  workqueueFamilies,
  type MetricFamily,
  type PromClientMetric,
  type Sample,
} from './prometheus.ts';
export { transportBytes, type TransportBytes } from '../1-transport/httpTransport.ts';
export {
  DEFAULT_STALE_AFTER_MS,
  HEALTH_INTERVAL_MS,
  informerHealth,
  isFailure,
  isStale,
  readiness,
  type InformerHealth,
  type StalenessOptions,
} from '../5-informer/health.ts';
