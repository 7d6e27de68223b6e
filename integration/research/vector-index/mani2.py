import sys, glob, pb, uuid
for d in sys.argv[1:]:
    p = sorted(glob.glob(d+"/_versions/*.manifest"))[0]
    sec = pb.index_section(p)
    for fn, wt, v in pb.fields(sec):
        print("==", d.split('/')[-1])
        for f2, w2, v2 in pb.fields(v):
            if f2 == 1: print("  uuid", uuid.UUID(bytes=pb.fields(v2)[0][2]))
            elif f2 == 2: print("  fields", pb.packed(v2) if w2==2 else v2)
            elif f2 == 5: print("  fragment_bitmap", v2.hex())
            elif f2 == 6:
                any_ = pb.fields(v2)
                print("  index_details type_url", any_[0][2])
                for f3,w3,v3 in pb.fields(any_[1][2]) if len(any_)>1 else []:
                    if f3 == 9: print("    #9", [x[2] for x in pb.fields(v3)])
                    elif w3 == 2: print(f"    #{f3} msg", pb.fields(v3), v3.hex())
                    else: print(f"    #{f3}", v3)
            elif f2 == 10: print("  #10 file", pb.fields(v2))
            else: print(f"  #{f2}", v2)
