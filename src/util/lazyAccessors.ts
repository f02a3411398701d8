/**
 * The accessor pairs of one kind of lazily decoded object: one descriptor per member name, shared by every object of
 * that kind, whose getter decodes the member on first read (`read`) and whose setter stores a value written over it
 * (`write`). Lazy JSON (1-transport/lazyJson.ts) and lazy protobuf (1-transport/protobuf/lazy.ts) each make one.
 */
export function lazyAccessors(
  read: (target: object, key: string) => unknown,
  write: (target: object, key: string, value: unknown) => void,
): (key: string) => PropertyDescriptor {
  const accessors = new Map<string, PropertyDescriptor>();
  return (key) => {
    let descriptor = accessors.get(key);
    if (!descriptor) {
      descriptor = {
        get(this: object) {
          return read(this, key);
        },
        set(this: object, value: unknown) {
          write(this, key, value);
        },
        enumerable: true,
        configurable: true,
      };
      accessors.set(key, descriptor);
    }
    return descriptor;
  };
}
