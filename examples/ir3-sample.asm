; A small ir3 sample (a6xx) in Mesa's assembly syntax, one instruction per line.
; `lathe asm --gpu a630` turns it into words; `lathe disasm` prints it back.
nop
brao !p0.x, !p0.y, #7
(rpt1)mov.f32f32 r1.y, (r)c260.x
mov.f16f16 hr1.z, h(0.500000)
sel.f16 hr0.x, hc16.y, hr0.x, hc16.z
(nop3) wmm.accu hr0.z, (neg)hr0.w, hr0.w, 2
sam.base0 (f32)(xyzw)r0.x, r0.z, s#1, a1.x
stg.a.f32 g[r1.x+(r1.z<<2)], r0.z, 2
ldg.u32 r1.z, g[r1.z+7], 1
stlw.f32 l[r2.x], r0.w, 4
cmps.s.eq p0.x, r1.x, 1
add.f r1.w, r2.x, (neg)(1/log2(10))
(sy)mul.f hr1.x, hr1.x, h(4.0)
ldc.offset2.1.imm r0.x, r0.x, 0
(sy)atomic.max.untyped.1d.u32.1.l r0.w, l[r0.z], r0.w
(sy)atomic.b.add.typed.2d.u32.1.nonuniform.base0 r1.x, r0.z, r1.z
(sy)bar.g
end
