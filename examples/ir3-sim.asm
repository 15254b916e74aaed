; lathe sim --gpu a630 --set r1.x=1.5 --set r1.y=2.25 --dump r0.x,r0.y,hr4.x examples/ir3-sim.asm
add.f r0.x, r1.x, (neg)r1.y
(nop3) mul.f r0.y, r1.x, r1.x
cov.f32f16 hr4.x, r0.x
end
