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
  workqueueFamilies,
  type MetricFamily,
  type PromClientMetric,
  type Sample,
} from './prometheus.ts';
