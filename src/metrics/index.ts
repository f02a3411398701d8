export { informerMetrics$, type InformerMetrics } from './informerMetrics.ts';
export {
  controllerFamilies,
  informerFamilies,
  promClientMetrics,
  toPrometheusText,
  workqueueFamilies,
  type MetricFamily,
  type PromClientMetric,
  type Sample,
} from './prometheus.ts';
