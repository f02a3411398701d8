export { and, isRecreate, not, or, updatePredicate, where, type Predicate } from './predicate.ts';
export { annotationsChanged, generationChanged, labelsChanged, resourceVersionChanged } from './changes.ts';
