import lance, sys, glob, os, json
from lance.file import LanceFileReader
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d + "/_indices/*/*")):
        print("=====", f, os.path.getsize(f))
        r = LanceFileReader(f)
        md = r.metadata()
        print("meta attrs:", [a for a in dir(md) if not a.startswith('_')])
        print("major/minor:", getattr(md,'major_version',None), getattr(md,'minor_version',None))
        print("num_rows", r.num_rows())
        print("schema:", md.schema)
        for k,v in (md.schema.metadata or {}).items():
            print("  META", k, v[:600])
        print("global_buffers:", md.global_buffers)
        for i,_ in enumerate(md.global_buffers):
            b = r.read_global_buffer(i)
            print("  GB", i, len(b), bytes(b[:64]).hex())
