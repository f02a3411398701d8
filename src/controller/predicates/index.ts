export { and, isRecreate, not, or, updatePredicate, type Predicate } from './predicate.ts';
export { where } from './where.ts';
export { annotationsChanged, generationChanged, labelsChanged, resourceVersionChanged } from './changes.ts';
